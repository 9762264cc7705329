import random

SEED = 1796205121
CHAPTERS = {
    1: "Gastro-intestinal",
    2: "Cardiovascular",
    3: "Respiratory",
    4: "Central nervous system",
    5: "Infections",
    6: "Endocrine",
    7: "Obstetrics, gynaecology and urinary tract",
    8: "Malignancy and immunosuppression",
    9: "Nutrition and blood",
    10: "Musculoskeletal",
    11: "Eye",
    12: "Ear, nose and oropharynx",
    13: "Skin",
    14: "Vaccines",
    15: "Anaesthesia",
}
rng = random.Random(SEED)
for i in range(1, 25):
    ch = rng.randint(1, 15)
    age = rng.randint(19, 90)
    sex = rng.choice(["female", "male"])
    print(i, ch, CHAPTERS[ch], age, sex)

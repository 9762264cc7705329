import random

SEED = 1796206217  # date +%s at start
CHAPTERS = {
    1: "gastro-intestinal",
    2: "cardiovascular",
    3: "respiratory",
    4: "central nervous system",
    5: "infections",
    6: "endocrine",
    7: "obstetrics/gynaecology/urinary tract",
    8: "malignancy and immunosuppression",
    9: "nutrition and blood",
    10: "musculoskeletal",
    11: "eye",
    12: "ear nose oropharynx",
    13: "skin",
    14: "vaccines",
    15: "anaesthesia",
}
rng = random.Random(SEED)
for i in range(1, 13):
    ch = rng.randint(1, 15)
    age = rng.randint(19, 90)
    sex = rng.choice(["female", "male"])
    print(i, ch, CHAPTERS[ch], age, sex)

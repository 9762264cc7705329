"""canoe.v1: the care-plan API, generated from proto/canoe/v1/careplan.proto."""

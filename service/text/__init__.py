"""The plan in words: the clinician summary (``summary``), the patient version (``patient``)
and the small word helpers both use (``words``: a span of days, a UCUM unit).

Above the reasoning core and the patient record, below ``fhir_mapping`` (the CarePlan carries
this text) and the transports. Pure: frozen data in, text out; no I/O.
"""

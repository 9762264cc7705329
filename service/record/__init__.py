"""The patient record as the reasoning's callers see it: a frozen, FHIR-free profile
(``profile``) and the code systems and code groups it is read with (``vocabulary``).

Above the reasoning core, below ``fhir_mapping`` (which builds it) and ``inference`` (which reads
it). Plain data, no I/O; it never imports FHIR, gRPC or a model client.
"""

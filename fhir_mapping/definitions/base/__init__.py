"""The R4 (4.0.1) core definitions the project's StructureDefinition snapshots are built from.

``StructureDefinition-Extension.json`` is the official HL7 FHIR R4 Extension definition
(hl7.fhir.r4.core 4.0.1, CC0), as bundled in ``profiles-types.json`` of the R4 specification.
Data only; ``fhir_mapping.definitions._snapshot`` reads it.
"""

"""Which failure and which rank: signature findings, hang reasoning, candidates, tie-breaks, attribution,
the ``Diagnosis``, and its calibrated confidence. The engine never imports the LLM layer."""

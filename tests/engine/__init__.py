"""Engine tests: discriminators, hang reasoning, attribution, and invariance of answers to file names."""

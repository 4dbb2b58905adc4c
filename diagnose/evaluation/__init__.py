"""Evals: run the product over labeled failure logs and score it honestly."""

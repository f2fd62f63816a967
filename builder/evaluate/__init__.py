"""Evaluation stage: predictors, classification metrics, clarification quality, reports."""

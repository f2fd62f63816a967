"""What every labeller returns, and how model text becomes a label.

Sits below both `builder.evaluate` (which scores predictions) and `builder.train` (whose models make them),
so neither has to import the other for the type.
"""

from builder.predict.output import Prediction, Predictor, parse_model_output, prediction_from_output

__all__ = ["Prediction", "Predictor", "parse_model_output", "prediction_from_output"]

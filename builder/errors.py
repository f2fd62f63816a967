"""The one error type users see. The CLI prints its message and exits non-zero, without a traceback."""


class InputError(Exception):
    """Bad input: the message names the file, line or record, and field."""

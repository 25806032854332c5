"""arena: measures how agent frameworks pause for a human and resume."""

__version__ = "0.1.0"

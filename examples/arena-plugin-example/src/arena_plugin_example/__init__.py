"""An example arena plugin. Nothing is imported here: arena imports `adapter` or `rooms` only when
that adapter or arena is used."""

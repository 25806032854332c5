"""The model side: scripted policies (each arena brings its own, built from `script.py`), the Chat
Completions wire format they are served in (`server.py`), and `--model` resolution (`resolve.py`)."""

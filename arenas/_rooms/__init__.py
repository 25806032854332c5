"""What the three room arenas share (human_in_the_loop, durable_state, approval_gate).

Not an arena itself (it has no entry point in pyproject.toml's `arena.arenas`): the meeting-room tools
(`tools.py`), the scripted room-booking policy and its profiles (`policy.py`), and the item file
format with the checks every room item runs (`items.py`).
"""

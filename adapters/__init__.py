"""The built-in adapters, one module per framework. They are registered in pyproject.toml's
`arena.adapters` entry points, exactly as a plugin's are, and found through `arena.catalog`; this
package holds no registry of its own.

Each module imports its framework lazily (inside the adapter's methods), so loading an adapter's class
to read what it needs installed (`info.framework`, `requires`, `environment`, `concurrent`) is cheap.
"""

"""The full-screen Textual console. Imported only when the console opens."""

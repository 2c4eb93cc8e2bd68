"""The demo room: simulated agents (or real clients against a model stand-in) in tmux."""

"""The console's screens: the main room view, modals and help."""

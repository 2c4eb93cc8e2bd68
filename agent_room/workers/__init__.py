"""Background workers: the delivery worker and the link injector.

They run headless under ``agent-room watch`` or inside the console as Textual workers;
either way they only call the room service and the adapters passed in.
"""

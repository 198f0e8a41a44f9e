"""One module per command; importing them registers them on the group."""

"""The stable documents of every command: JSON records and summary lines, apart from the model and the command line."""

"""Analysis on top of the model: distributions, capacity plans, stats of live servers, the optimizer."""

"""The studies: one module per figure, each called by its figure, its claims and the sweeps."""

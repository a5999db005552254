"""The engine for independent Gaussian logits under any transform."""

"""greet: says hello."""

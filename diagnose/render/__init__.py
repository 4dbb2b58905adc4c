"""Show a diagnosis to a person: the terminal report."""

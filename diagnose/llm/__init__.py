"""The optional model: the litellm client, its response cache, prompts, grounding, and the diagnosis and chat calls."""

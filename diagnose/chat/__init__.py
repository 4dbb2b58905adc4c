"""Follow-up questions about a diagnosis: the session (data), offline answers, and the turn recorder."""

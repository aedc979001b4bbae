"""The dashboard of `metaclaw-plugin serve`: skills, sessions, training and scheduler pages behind the API token."""

"""The dashboard of ``metaclaw-plugin serve``: skills, sessions, training and scheduler pages behind the API
token. Read-only over the store except for a person's skill actions (approve, retire, rollback)."""

from .app import create_dashboard

__all__ = ["create_dashboard"]

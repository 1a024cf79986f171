"""Checkpointing schedules: Revolve, H-Revolve, online, their plans and what they save."""

"""Emit: generated syntax trees become text once, and the text a function; the table from generated lines to the user's lines."""

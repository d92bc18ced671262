"""Hub-ready folders: the dataset card (README.md) generated from build manifests."""

from cogen.hub.card import card_header, render_card, write_card

__all__ = ["card_header", "render_card", "write_card"]

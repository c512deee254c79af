"""The composer: the box the user types requests and /commands into (``composer``),
Tab's offers (``completion``) and their menu (``menu``), the lines sent (``history``)."""

from widgets.composer.composer import Composer

__all__ = ["Composer"]

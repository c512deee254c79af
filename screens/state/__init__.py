"""What the UI knows and shows, apart from any widget: the state store that publishes
its changes as signals, and the intents screens post to ask the app to act.

Screens read and subscribe to the store and post intents; the app applies engine
events to the store and carries intents out. Widgets import nothing from here.
"""

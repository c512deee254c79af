"""The app's link to the engine: engine events as Textual messages, and the bridge.

``messages`` the Textual messages the app applies to the UI state (no engine types at
import: the first frame loads no pydantic); ``event_table`` which engine event becomes
which message, loaded with the first event; ``bridge`` carries intents out on the
engine in workers; ``switch_queue`` keeps only the latest session switch asked for.
"""

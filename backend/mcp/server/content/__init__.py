"""What the MCP server offers a client besides its transports: resources (sessions,
library fragments, registry content), prompts, the instructions sent at initialize,
the four tools' replies, and descriptions for aggregated servers' domains."""

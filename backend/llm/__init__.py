"""The provider layer: one internal chat model over every vendor's API."""

"""Video models with published architectures and weight layouts (torch imported on use)."""

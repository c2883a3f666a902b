"""Reading videos and writing clips."""

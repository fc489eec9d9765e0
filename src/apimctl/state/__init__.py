"""Live state: the area read through the API into one model (``live``), and the normal form
both sides of a comparison are brought into (``normalise``)."""

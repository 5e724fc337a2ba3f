"""Renderers of the NeRV paper's (Venna et al. 2010) measure panels, Table 2 analogue and retrieval measures."""

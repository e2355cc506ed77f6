"""DataFrame operations built from the engine's native ones (set operations, reshaping, cleaning,
summaries, constructors). ``ketch.dataframe.DataFrame`` exposes them as thin methods."""

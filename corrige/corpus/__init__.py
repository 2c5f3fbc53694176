"""Training data for the model: real everyday English sentences and the learner errors injected into them.

`sources` turns downloaded, permissively licensed text (Tatoeba, Standard Ebooks, Project Gutenberg, Taskmaster,
WordNet, Common Voice) into one clean, deduplicated, shuffled file of sentences with a manifest of where each came
from; the rest of the package builds training pairs from those sentences. Only the training tools import this
package: the server never does.
"""

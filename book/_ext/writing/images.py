"""Every <img> with its size, loaded lazily: nothing jumps, nothing below the fold is paid for.

Sphinx writes ``<img src alt>`` with no size, so a figure takes no room until its file
arrives and the text under it jumps down; and the browser fetches every figure of a page
at once, read or not. This wraps the HTML translator in use (pydata-sphinx-theme's, set
up at ``builder-inited`` with the default priority) so that each image gets

* ``width`` and ``height``, the file's own pixel size: with ``height: auto`` in book.css
  the browser reserves the box at the right aspect ratio before the file arrives;
* ``loading="lazy"`` and ``decoding="async"``: an image in or near the first screen is
  fetched at once anyway, one further down only when the reader scrolls toward it.

Docutils can write ``width``/``height`` only as a fixed-size ``style``, which would stop
a figure from shrinking on a phone, so the attributes go into the tag here. An image
whose size cannot be read is a build warning.
"""

import os
import re

from sphinx.util import logging
from sphinx.util.images import get_image_size

from book._ext.shared.translators import wrap_html_translators

logger = logging.getLogger(__name__)


class ImageAttributesMixin:
    def visit_image(self, node):
        source = os.path.join(self.builder.srcdir, node["uri"])
        super().visit_image(node)
        index = next(i for i in range(len(self.body) - 1, -1, -1) if self.body[i].lstrip().startswith("<img"))
        tag = self.body[index]
        extra = {"loading": "lazy", "decoding": "async"}
        if not re.search(r'\swidth="', tag):  # an attribute; quotes inside alt are escaped
            size = get_image_size(source)
            if size is None:
                logger.warning("cannot read the size of image %s", node["uri"], location=node,
                               type="images", subtype="size")
            else:
                extra.update(width=str(size[0]), height=str(size[1]))
        attributes = "".join(f' {k}="{v}"' for k, v in extra.items() if not re.search(rf'\s{k}="', tag))
        self.body[index] = re.sub(r"^(\s*<img)", rf"\1{attributes}", tag, count=1)


def setup(app):
    # After pydata-sphinx-theme's own wrapper (builder-inited, priority 500).
    app.connect("builder-inited", wrap_html_translators(ImageAttributesMixin, "Sized"), priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

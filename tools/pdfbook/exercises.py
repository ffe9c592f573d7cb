"""Exercise solutions go to the end of their chapter, never under the question.

On the site each solution is a collapsed dropdown right after its exercise. On paper
an open solution under the question gives the answer away, so every solution of a page
moves, in order, to a last section of that page, 练习解答. Each keeps its title, which
links back to the exercise.
"""

from bs4 import BeautifulSoup

SOLUTION = "div.solution"
HEADING = "练习解答"
NOTE = "网页上折叠在每道练习下面的解答，在这里按题号集中给出。"


def move_solutions(section):
    """Move every solution of ``section`` (a page) into a closing 练习解答 section."""
    solutions = [box.extract() for box in section.select(SOLUTION)]
    if not solutions:
        return None
    soup = BeautifulSoup("", "html.parser")
    closing = soup.new_tag("section", attrs={"class": "pdf-solutions", "id": "pdf-solutions"})
    closing.extend([soup.new_tag("h2", string=HEADING), soup.new_tag("p", string=NOTE), *solutions])
    (section.find("section") or section).append(closing)
    return closing

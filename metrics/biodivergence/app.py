"""Hub Space entry point: evaluate's Gradio widget for this metric (the Space runs ``python app.py``).

In the widget each cell holds one record as JSON, e.g. ``{"conflict_type": "no_conflict"}``.
"""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

if __name__ == "__main__":
    launch_gradio_widget(evaluate.load(str(Path(__file__).with_name("biodivergence.py"))))

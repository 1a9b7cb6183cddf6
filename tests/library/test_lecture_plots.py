"""The lecture figures added for notebooks 3, 4 and 6: they take ``ax=``, return it, and draw what they say."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from perceptron_course import datasets, plotting  # noqa: E402
from perceptron_course.perceptron import train  # noqa: E402
from perceptron_course.svm import fit_linear_svm  # noqa: E402


def test_label_axes_names_axes_and_lists_the_classes():
    fig, ax = plt.subplots()
    X, y = datasets.six_point_example()
    plotting.plot_points(X, y, ax=ax)
    assert plotting.label_axes(ax, "first", "second") is ax
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("first", "second")
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["y = -1", "y = +1"]
    plt.close(fig)


def test_plot_losses_draws_the_three_losses_on_the_given_axes():
    fig, ax = plt.subplots()
    assert plotting.plot_losses(ax=ax, z_min=-2, z_max=3) is ax
    perceptron, hinge = ax.lines[1], ax.lines[2]
    z = perceptron.get_xdata()
    assert np.allclose(perceptron.get_ydata()[z < 0], -z[z < 0]) and np.all(perceptron.get_ydata()[z >= 0] == 0)
    assert np.allclose(hinge.get_ydata(), np.maximum(0, 1 - z))
    plt.close(fig)


def test_proof_squeeze_bounds_cross_at_r_over_gamma_squared():
    fig, ax = plt.subplots()
    assert plotting.plot_proof_squeeze(2.0, 0.5, ax=ax, norms=[0.0, 1.0, 1.5]) is ax
    lower, upper = ax.lines[0], ax.lines[1]
    crossing = ax.lines[2].get_xdata()[0]
    assert crossing == 16.0  # (2 / 0.5)^2
    k = lower.get_xdata()
    before = (k > 0) & (k < 16)
    assert np.all(lower.get_ydata()[before] < upper.get_ydata()[before])
    assert np.all(lower.get_ydata()[k > 16] > upper.get_ydata()[k > 16])
    assert ax.get_xlabel() and ax.get_ylabel()
    plt.close(fig)


def test_plot_svm_circles_exactly_the_support_vectors():
    X = np.array([[0.0, 1.0], [2.0, 3.0], [0.0, -1.0], [-2.0, -3.0]])
    y = np.array([1, 1, -1, -1])
    svm = fit_linear_svm(X, y)
    fig, ax = plt.subplots()
    assert plotting.plot_svm(svm, X, y, ax=ax) is ax
    circled = [c for c in ax.collections if c.get_label() == "support vectors"][0]
    assert sorted(map(tuple, circled.get_offsets())) == [(0.0, -1.0), (0.0, 1.0)]
    plt.close(fig)


def test_label_axes_stands_in_a_line_for_a_labelled_contour(recwarn):
    X, y = datasets.linearly_separable(20, 2, margin=0.1, seed=0)
    fig, ax = plt.subplots()
    plotting.plot_decision_boundary([1.0, 0.5], 0.1, X, y, ax=ax)
    plotting.label_axes(ax)
    assert [text.get_text() for text in ax.get_legend().get_texts()][-1] == "w·x + b = 0"
    assert len(recwarn) == 0
    plt.close(fig)


def test_animation_frames_can_carry_axis_labels_and_a_legend():
    X, y = datasets.six_point_example()
    run = train(X, y, bias=False)
    animation = plotting.animate_updates(run, X, y, axis_labels=("first", "second"))
    animation.to_jshtml()  # draws every frame; the figure keeps the last one
    ax = animation._fig.axes[0]  # FuncAnimation offers no public accessor for its figure
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("first", "second")
    assert [text.get_text() for text in ax.get_legend().get_texts()][:2] == ["y = -1", "y = +1"]


def _shaded_colours(ax) -> list[tuple]:
    """The face colours (RGB) of the filled regions drawn on ``ax``."""
    return [tuple(np.round(c.get_facecolor()[0][:3], 3)) for c in ax.collections if c.get_label() != "support vectors"
            and len(c.get_facecolor()) and c.get_facecolor()[0][3] < 1]


def test_a_frame_at_w_zero_is_shaded_with_the_side_every_point_gets():
    # w = 0, b = 0 predicts +1 everywhere (sign(0) = +1); on XOR the cycle passes through w = 0, b = -2: -1 everywhere.
    positive = tuple(np.round(matplotlib.colors.to_rgb(plotting.POSITIVE[0]), 3))
    negative = tuple(np.round(matplotlib.colors.to_rgb(plotting.NEGATIVE[0]), 3))
    X, y = datasets.six_point_example()
    fig, ax = plt.subplots()
    plotting.plot_update(train(X, y, bias=False), X, y, 0, ax=ax)
    assert _shaded_colours(ax) == [positive]
    assert "+1" in " ".join(text.get_text() for text in ax.texts)
    plt.close(fig)
    X_xor, y_xor = datasets.xor()
    run = train(X_xor, y_xor, max_epochs=3)
    k = next(k for k, row in enumerate(run.weight_history) if not row[1:].any() and row[0] < 0)
    fig, ax = plt.subplots()
    plotting.plot_update(run, X_xor, y_xor, k, ax=ax)
    assert _shaded_colours(ax) == [negative]
    plt.close(fig)


def test_a_figure_is_shown_with_its_alt_text_in_every_form_a_renderer_reads():
    import base64

    import pytest

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    alt = 'A falling line from (0, 1) to (1, 0), "quoted" & <tagged>'
    data, metadata = plotting.figure_bundle(fig, alt)
    assert set(data) == set(plotting.FIGURE_MIMETYPES) and metadata == {"image/png": {"alt": alt}}
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert data["text/html"] == (f'<img src="data:image/png;base64,{data["image/png"]}" '
                                 'alt="A falling line from (0, 1) to (1, 0), &quot;quoted&quot; &amp; &lt;tagged&gt;">')
    assert data["text/plain"] == alt
    with pytest.raises(ValueError, match="alternative text"):
        plotting.figure_bundle(fig, "  ")
    plotting.show(fig, alt)  # outside IPython, display prints the text: the figure is closed either way
    assert not plt.fignum_exists(fig.number)


def test_the_animation_player_labels_its_frame_image_and_slider():
    X, y = datasets.six_point_example()
    run = train(X, y, bias=False)
    player = plotting.animation_html(plotting.animate_updates(run, X, y), alt='frames "of" the run', slider_label="frame <k>")
    assert player.count('alt="frames &quot;of&quot; the run" id="_anim_img') == 1
    assert player.count('class="anim-slider" aria-label="frame &lt;k&gt;"') == 1


def test_one_vs_rest_regions_hatches_the_empty_and_the_ambiguous_parts():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perceptron_course.plotting import plot_one_vs_rest_regions

    W = np.array([[0.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])
    b = np.array([-1.0, 0.0, 0.0])
    X = np.array([[0.0, 3.0], [3.0, -1.0], [-3.0, -1.0]])
    fig, ax = plt.subplots()
    assert plot_one_vs_rest_regions(W, b, X, np.array([0, 1, 2]), ax=ax) is ax
    hatches = {h for collection in ax.collections for h in list(getattr(collection, "hatches", None) or []) if h}
    assert {"..", "//"} <= hatches
    assert {"empty: no score >= 0", "ambiguous: several >= 0"} <= {t.get_text() for t in ax.get_legend().get_texts()}
    plt.close(fig)

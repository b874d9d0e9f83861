"""datakit.see.video_clip: a clip as a frame grid and as an animation."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from datakit.see.video_clip import (
    clip_animation,
    clip_grid,
    plot_clip,
    plot_fit_choices,
)


def test_grid_keeps_frame_order_and_takes_grayscale_floats():
    clip = np.arange(5, dtype=np.float32)[:, None, None, None] * np.ones((5, 2, 2, 1)) * 50
    grid = clip_grid(clip, columns=2)
    assert grid.shape == (3 * 3 - 1, 2 * 3 - 1, 3) and grid.dtype == np.uint8
    assert [grid[r * 3, c * 3, 0] for r in range(3) for c in range(2)][:5] == [0, 50, 100, 150,
                                                                              200]
    assert (grid[6:, 3:] == 255).all()  # no sixth frame: left white


def test_plot_draws_into_the_axes_given_and_animation_is_html():
    fig, ax = plt.subplots()
    clip = np.zeros((1, 4, 6, 6, 3), np.uint8)  # a batch of one clip
    assert plot_clip(clip, ax=ax, title="x") is ax and ax.get_title(loc="left") == "x"
    plt.close(fig)
    assert "<script" in clip_animation(clip[0])
    with pytest.raises(ValueError, match="pass one clip"):
        plot_clip(np.zeros((4, 6, 6)))


def test_fit_choices_show_a_tall_frame_squashed_cropped_and_padded():
    tall = np.full((64, 32, 3), 200, np.uint8)  # a frame twice as tall as wide
    axes = plot_fit_choices(tall.transpose(1, 0, 2), tall, 16)
    titles = [ax.get_title() for ax in axes]
    assert titles == ["as stored\n64 wide, 32 tall", "turned\n32 wide, 64 tall",
                      "squashed\n16 wide, 16 tall", "cropped\n16 wide, 16 tall",
                      "padded\n16 wide, 16 tall"]
    padded = axes[4].get_images()[0].get_array()
    assert padded[:, :4].max() == 0 and padded[:, 6:10].min() == 200  # black bars left, right
    plt.close(axes[0].figure)

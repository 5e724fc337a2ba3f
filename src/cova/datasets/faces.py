"""Rendered faces on a known manifold: a synthetic analogue of the SculptFaces data of the NeRV paper (Venna et al.
2010, Sec. 4.4, Fig. 8).

SculptFaces (Tenenbaum et al. 2000) holds 698 images of 64×64 pixels of one sculpted face, rendered while its
left-right pose, up-down pose and lighting direction change; NeRV uses the raw pixels as input and measures how
well a display retrieves the neighbours in (pose, lighting) space. The original images are not available offline,
so this generator renders a head of the same kind [ours]: a union of ellipsoids (skull, hair, jaw, brow ridge,
nose, eyes, mouth, chin, ears), seen by an orthographic camera and lit by one directional light with Lambert's cosine law plus an ambient
term. Every image is a smooth function of three latent coordinates, stored as the dataset's ``ground_truth``
(in degrees, as SculptFaces' pose and lighting angles):

* ``yaw``   left-right pose, uniform in [−75°, 75°] (rotation about the vertical axis);
* ``pitch`` up-down pose, uniform in [−10°, 10°] (rotation about the horizontal axis);
* ``light`` azimuth of the light about the vertical axis, uniform in [−75°, 75°] (0 = from the camera).

The ranges follow those usually quoted for SculptFaces' pose; its lighting range is not printed in the NeRV
paper, ours is an assumption. Cohorts (needed by the cohort scores and the 5-NN error; NeRV uses no labels here) are
a coarse grid of the latent box: ``n_yaw_bins`` equal bins of the yaw × ``n_light_bins`` of the light direction.
"""

from __future__ import annotations

import numpy as np

from ..constraints import POSITIVE_INT, SEED, declare, integer
from .base import Dataset

#: Latent coordinates (names, ranges in degrees) of :func:`sculpt_faces`.
LATENT_RANGES: dict[str, tuple[float, float]] = {"yaw": (-75.0, 75.0), "pitch": (-10.0, 10.0),
                                                  "light": (-75.0, 75.0)}

#: The head, in head coordinates (x right, y up, z toward the camera at zero pose): (centre, radii, albedo) per
#: ellipsoid. Hair, eyes and mouth are darker ellipsoids that show the pose under any lighting.
_HEAD: tuple[tuple[tuple[float, float, float], tuple[float, float, float], float], ...] = (
    ((0.0, 0.12, -0.05), (0.72, 0.9, 0.8), 1.0),       # skull
    ((0.0, 0.32, -0.18), (0.77, 0.82, 0.8), 0.35),     # hair
    ((0.0, -0.45, 0.12), (0.5, 0.42, 0.55), 1.0),      # jaw
    ((0.0, 0.3, 0.6), (0.48, 0.09, 0.14), 0.9),        # brow ridge
    ((0.0, -0.08, 0.76), (0.12, 0.26, 0.3), 1.0),      # nose
    ((-0.25, 0.13, 0.63), (0.1, 0.06, 0.09), 0.1),     # left eye
    ((0.25, 0.13, 0.63), (0.1, 0.06, 0.09), 0.1),      # right eye
    ((0.0, -0.43, 0.62), (0.18, 0.045, 0.07), 0.3),    # mouth
    ((0.0, -0.62, 0.5), (0.22, 0.1, 0.12), 1.0),       # chin
    ((-0.73, 0.0, -0.1), (0.08, 0.22, 0.14), 0.9),     # left ear
    ((0.73, 0.0, -0.1), (0.08, 0.22, 0.14), 0.9),      # right ear
)
#: Half the field of view of the orthographic camera, in head units.
_VIEW = 1.25
#: Ambient light, so that the unlit side is not pure background.
_AMBIENT = 0.15


def _rotation(yaw: float, pitch: float) -> np.ndarray:
    """Head-to-camera rotation: pitch about the x axis, then yaw about the y axis (radians)."""
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    r_yaw = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    r_pitch = np.array([[1.0, 0.0, 0.0], [0.0, cp, -sp], [0.0, sp, cp]])
    return r_yaw @ r_pitch


def render_head(yaw: float, pitch: float, light: float, size: int = 64) -> np.ndarray:
    """One ``size``×``size`` image (values in [0, 1], background 0) of the head at pose (``yaw``, ``pitch``) lit
    from azimuth ``light`` (all in degrees; module docstring). Each pixel's ray is intersected with every
    ellipsoid in closed form (a quadratic in the ray parameter); the nearest hit is shaded by
    ``albedo·(ambient + (1 − ambient)·max(0, n·l))`` with n the surface normal there."""
    R = _rotation(np.radians(yaw), np.radians(pitch))
    a = np.radians(light)
    light_dir = np.array([np.sin(a), 0.25, np.cos(a)])
    light_dir /= np.linalg.norm(light_dir)
    grid = np.linspace(-_VIEW, _VIEW, size)
    px, py = np.meshgrid(grid, -grid)  # image rows run top to bottom
    origins = np.stack([px.ravel(), py.ravel(), np.full(px.size, 10.0)], axis=1) @ R  # into head coordinates
    direction = np.array([0.0, 0.0, -1.0]) @ R
    depth = np.full(px.size, np.inf)
    normal = np.zeros((px.size, 3))
    albedo = np.zeros(px.size)
    for centre, radii, shade in _HEAD:
        c, r = np.asarray(centre), np.asarray(radii)
        o, d = (origins - c) / r, direction / r
        qa = d @ d
        qb = 2.0 * o @ d
        qc = np.einsum("ij,ij->i", o, o) - 1.0
        disc = qb * qb - 4.0 * qa * qc
        hit = disc >= 0.0
        t = np.where(hit, (-qb - np.sqrt(np.where(hit, disc, 0.0))) / (2.0 * qa), np.inf)
        nearer = t < depth
        depth = np.where(nearer, t, depth)
        p = origins[nearer] + t[nearer, None] * direction
        normal[nearer] = (p - c) / (r * r)
        albedo[nearer] = shade
    seen = np.isfinite(depth)
    n = normal[seen] @ R.T  # back to camera coordinates
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    image = np.zeros(px.size)
    image[seen] = albedo[seen] * (_AMBIENT + (1.0 - _AMBIENT) * np.maximum(n @ light_dir, 0.0))
    return image.reshape(size, size)


@declare({"n_samples": [integer(2, None)], "image_size": [integer(8, None)], "n_yaw_bins": POSITIVE_INT,
          "n_light_bins": POSITIVE_INT, "random_state": SEED})
def sculpt_faces(n_samples: int = 698, image_size: int = 64, n_yaw_bins: int = 4, n_light_bins: int = 2,
                 random_state: int = 0) -> Dataset:
    """``n_samples`` rendered head images (module docstring; NeRV Fig. 8's SculptFaces has 698 of 64×64 pixels),
    X = raw pixel values in [0, 1], ``ground_truth`` = (yaw, pitch, light) in degrees, cohorts = a
    ``n_yaw_bins`` × ``n_light_bins`` grid of the yaw and the light direction (cohort ``light_bin·n_yaw_bins +
    yaw_bin``)."""
    rng = np.random.default_rng(random_state)
    latent = np.column_stack([rng.uniform(lo, hi, n_samples) for lo, hi in LATENT_RANGES.values()])
    X = np.stack([render_head(*row, size=image_size).ravel() for row in latent])
    (y_lo, y_hi), (l_lo, l_hi) = LATENT_RANGES["yaw"], LATENT_RANGES["light"]
    yaw_bin = np.minimum(((latent[:, 0] - y_lo) / (y_hi - y_lo) * n_yaw_bins).astype(np.int64), n_yaw_bins - 1)
    light_bin = np.minimum(((latent[:, 2] - l_lo) / (l_hi - l_lo) * n_light_bins).astype(np.int64),
                           n_light_bins - 1)
    names = [f"light {b + 1} yaw {a + 1}" for b in range(n_light_bins) for a in range(n_yaw_bins)]
    return Dataset(X, light_bin * n_yaw_bins + yaw_bin, names, ground_truth=latent,
                   meta={"source": "synthetic", "generator": "sculpt_faces", "n_samples": n_samples,
                         "image_shape": [image_size, image_size], "ground_truth_names": list(LATENT_RANGES),
                         "n_yaw_bins": n_yaw_bins, "n_light_bins": n_light_bins, "random_state": random_state})

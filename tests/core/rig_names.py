"""Joint names of other rigs for the tests of invariance (a plain module: ``from rig_names import ...``)."""

# The Bandai Namco joints under the names of the CMU capture (the still joint_Root left as it is)
CMU_NAMES = {
    "Hips": "Hips", "Spine": "Spine", "Chest": "Spine1", "Neck": "Neck", "Head": "Head",
    "Shoulder_L": "LeftShoulder", "UpperArm_L": "LeftArm", "LowerArm_L": "LeftForeArm", "Hand_L": "LeftHand",
    "Shoulder_R": "RightShoulder", "UpperArm_R": "RightArm", "LowerArm_R": "RightForeArm", "Hand_R": "RightHand",
    "UpperLeg_L": "LeftUpLeg", "LowerLeg_L": "LeftLeg", "Foot_L": "LeftFoot", "Toes_L": "LeftToeBase",
    "UpperLeg_R": "RightUpLeg", "LowerLeg_R": "RightLeg", "Foot_R": "RightFoot", "Toes_R": "RightToeBase",
}

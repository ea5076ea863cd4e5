# Sourced by the scripts that run a pinned Python tool (sam.sh, checkov.sh,
# emulator.sh). Each tool lives in a virtualenv of its own under
# ~/.cache/lambdaworkflow: their pins clash (aws-sam-cli pins boto3,
# ministack pins botocore, checkov pins both, each at another version).
#
#   venv=$(pyvenv NAME REQUIREMENTS [DIR])
#
# makes sure the virtualenv NAME (or DIR, if given) holds REQUIREMENTS,
# installing them when the file changed since the last install, and prints
# its directory.
pyvenv() {
	local name=$1 requirements=$2
	local venv=${3:-${XDG_CACHE_HOME:-$HOME/.cache}/lambdaworkflow/$name-venv}
	local stamp=$venv/.requirements.sha256 want
	want=$(sha256sum "$requirements" | cut -d' ' -f1)
	if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
		echo "installing $(basename "$requirements") into $venv" >&2
		[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
		"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
		echo "$want" >"$stamp"
	fi
	echo "$venv"
}

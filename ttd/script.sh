#!/bin/sh -e
echo "script says $1 $2"
exit 6
